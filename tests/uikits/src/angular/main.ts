// Angular in JIT mode: @angular/compiler is bundled and compiles the
// component templates in the browser; no Angular CLI involved.
import '@angular/compiler';
import { Component, computed, effect, provideZonelessChangeDetection, signal } from '@angular/core';
import { bootstrapApplication } from '@angular/platform-browser';

interface Line { id: number; product: string; qty: number }

const PRODUCTS = ['Keyboard', 'Mouse', 'Monitor', 'Headset', 'Webcam'];

@Component({
  selector: 'app-root',
  styles: [`
    :host { display: block; font: 15px/1.45 system-ui, sans-serif; max-width: 640px; margin: 0 auto; padding: 20px; }
    .field { margin: 10px 0; } .field > label:first-child { display: block; font-weight: 600; }
    input, select, button { font: inherit; padding: 5px 8px; }
    .combo { position: relative; display: inline-block; }
    ul[role=listbox] { position: absolute; z-index: 5; background: #fff; border: 1px solid #999; list-style: none; margin: 2px 0; padding: 2px; min-width: 200px; }
    li[role=option] { padding: 4px 8px; cursor: default; } li[aria-selected=true] { background: #1565c0; color: #fff; }
    table { border-collapse: collapse; width: 100%; } td, th { border-bottom: 1px solid #ddd; padding: 4px; text-align: left; }
    output { font-family: monospace; font-size: 12px; word-break: break-all; }
  `],
  template: `
    <h1>Order form (Angular)</h1>
    <div class="field">
      <label for="customer">Customer</label>
      <input id="customer" [value]="customer()" (input)="customer.set(val($event))" placeholder="Customer name">
    </div>
    <div class="field">
      <label for="shipping">Shipping</label>
      <select id="shipping" (change)="shipping.set(val($event))">
        @for (s of shippingOptions; track s) { <option [value]="s" [selected]="s === shipping()">{{ s }}</option> }
      </select>
    </div>
    <div class="field">
      <label><input type="checkbox" [checked]="gift()" (change)="gift.set(checked($event))"> Gift wrap</label>
    </div>
    <div class="field">
      <label id="product-label">Product</label>
      <div class="combo">
        <button type="button" id="product-button" aria-haspopup="listbox" [attr.aria-expanded]="open()"
                aria-labelledby="product-label product-button" (click)="open.set(!open())"
                (keydown)="onButtonKey($event)">{{ product() }}</button>
        @if (open()) {
          <ul role="listbox" aria-labelledby="product-label" tabindex="-1">
            @for (p of products; track p; let i = $index) {
              <li role="option" [attr.aria-selected]="i === active()" (mouseenter)="active.set(i)" (click)="choose(p)">{{ p }}</li>
            }
          </ul>
        }
      </div>
      <label for="qty" style="display:inline; margin-left: 8px">Qty</label>
      <input id="qty" type="number" min="1" max="99" [value]="qty()" (input)="qty.set(+val($event))" style="width: 5em">
      <button type="button" (click)="add()">Add line</button>
    </div>
    <table>
      <thead><tr><th>Product</th><th>Qty</th><th></th></tr></thead>
      <tbody>
        @for (l of lines(); track l.id) {
          <tr><td>{{ l.product }}</td><td>{{ l.qty }}</td>
            <td><button type="button" [attr.aria-label]="'Remove ' + l.product" (click)="remove(l.id)">Remove</button></td></tr>
        } @empty { <tr><td colspan="3">No lines yet</td></tr> }
      </tbody>
    </table>
    <p>Total items: {{ total() }}</p>
    <p>State:</p>
    <output id="app-state">{{ stateJson() }}</output>
  `,
})
class App {
  products = PRODUCTS;
  shippingOptions = ['Standard', 'Express', 'Pickup'];
  customer = signal('');
  shipping = signal('Standard');
  gift = signal(false);
  product = signal(PRODUCTS[0]);
  open = signal(false);
  active = signal(0);
  qty = signal(1);
  lines = signal<Line[]>([]);
  nextId = 1;
  total = computed(() => this.lines().reduce((n, l) => n + l.qty, 0));
  stateJson = computed(() => JSON.stringify({
    customer: this.customer(), shipping: this.shipping(), gift: this.gift(), product: this.product(),
    listboxOpen: this.open(), qty: this.qty(), lines: this.lines().map(({ product, qty }) => ({ product, qty })),
  }));

  constructor() {
    effect(() => { (window as any).appState = JSON.parse(this.stateJson()); });
  }

  val(e: Event) { return (e.target as HTMLInputElement).value; }
  checked(e: Event) { return (e.target as HTMLInputElement).checked; }
  choose(p: string) { this.product.set(p); this.open.set(false); }
  onButtonKey(e: KeyboardEvent) {
    if (!this.open() && (e.key === 'ArrowDown' || e.key === 'Enter' || e.key === ' ')) {
      e.preventDefault(); this.active.set(PRODUCTS.indexOf(this.product())); this.open.set(true);
    } else if (this.open() && e.key === 'ArrowDown') {
      e.preventDefault(); this.active.set(Math.min(this.active() + 1, PRODUCTS.length - 1));
    } else if (this.open() && e.key === 'ArrowUp') {
      e.preventDefault(); this.active.set(Math.max(this.active() - 1, 0));
    } else if (this.open() && (e.key === 'Enter' || e.key === ' ')) {
      e.preventDefault(); this.choose(PRODUCTS[this.active()]);
    } else if (e.key === 'Escape') {
      this.open.set(false);
    }
  }
  add() {
    if (this.qty() < 1) return;
    this.lines.update((ls) => [...ls, { id: this.nextId++, product: this.product(), qty: this.qty() }]);
  }
  remove(id: number) { this.lines.update((ls) => ls.filter((l) => l.id !== id)); }
}

bootstrapApplication(App, { providers: [provideZonelessChangeDetection()] }).catch((err) => {
  document.body.insertAdjacentHTML('beforeend', `<pre id="bootstrap-error">${String(err)}</pre>`);
});
