// The demo shop: everything client-side, state in localStorage, so any
// static file server can serve it.
const PRODUCTS = [
  { sku: "mug-blue", name: "Blue Mug", price: 12.5 },
  { sku: "tea-green", name: "Green Tea", price: 6 },
  { sku: "pot-clay", name: "Clay Teapot", price: 34 },
];
const USERS = { ada: "lovelace", alan: "turing" };

const user = () => localStorage.getItem("shop_user");
const cart = () => JSON.parse(localStorage.getItem("shop_cart") || "{}");
const saveCart = (c) => localStorage.setItem("shop_cart", JSON.stringify(c));
const money = (n) => "$" + n.toFixed(2);

function header() {
  const count = Object.values(cart()).reduce((a, b) => a + b, 0);
  document.querySelector("#cart-count").textContent = String(count);
  document.querySelector("#user").textContent = user() ? "Signed in as " + user() : "Not signed in";
}

function shopPage() {
  const list = document.querySelector("#products");
  for (const p of PRODUCTS) {
    const card = document.createElement("div");
    card.className = "product";
    card.dataset.sku = p.sku;
    card.innerHTML = `<h2></h2><p class="price"></p><button class="add">Add to cart</button>`;
    card.querySelector("h2").textContent = p.name;
    card.querySelector(".price").textContent = money(p.price);
    card.querySelector("button").addEventListener("click", () => {
      if (!user()) {
        document.querySelector("#notice").textContent = "Log in to add items to your cart.";
        return;
      }
      const c = cart();
      c[p.sku] = (c[p.sku] || 0) + 1;
      saveCart(c);
      document.querySelector("#notice").textContent = "Added " + p.name + ".";
      header();
    });
    list.appendChild(card);
  }
  document.body.dataset.ready = "products";
}

function loginPage() {
  document.querySelector("#login").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = document.querySelector("#username").value.trim();
    const password = document.querySelector("#password").value;
    if (USERS[name] !== password) {
      document.querySelector("#error").textContent = "Wrong username or password.";
      return;
    }
    localStorage.setItem("shop_user", name);
    location.href = "/";
  });
  document.body.dataset.ready = "login";
}

function cartPage() {
  const body = document.querySelector("#cart-table tbody");
  let total = 0;
  for (const [sku, quantity] of Object.entries(cart())) {
    const p = PRODUCTS.find((p) => p.sku === sku);
    if (!p) continue;
    total += p.price * quantity;
    const row = document.createElement("tr");
    row.dataset.sku = sku;
    row.innerHTML = `<td class="name"></td><td class="quantity"></td><td class="price"></td>`;
    row.querySelector(".name").textContent = p.name;
    row.querySelector(".quantity").textContent = String(quantity);
    row.querySelector(".price").textContent = money(p.price * quantity);
    body.appendChild(row);
  }
  document.querySelector("#total").textContent = money(total);
  document.body.dataset.ready = "cart";
}

document.addEventListener("DOMContentLoaded", () => {
  header();
  ({ shop: shopPage, login: loginPage, cart: cartPage })[document.body.dataset.page]();
});
