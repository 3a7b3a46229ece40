import { mount } from 'svelte';
import App from './App.svelte';
import '../svelte.css';

mount(App, { target: document.getElementById('root') });
