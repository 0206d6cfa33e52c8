// The project's icon, on every page it serves (dashboard, sign-in, API reference) and at
// /favicon.ico, which browsers ask for on their own: without it each page logged a 404.
export const faviconSvg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#1d2330"/>
<path d="M7 23V9l9 8 9-8v14" fill="none" stroke="#cfd8ff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/>
</svg>`;

export const FAVICON_PATH = '/favicon.svg';
