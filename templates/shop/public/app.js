// Demo Shop page: plain JavaScript, no build step. Talks to the JSON API with fetch.
// Test hooks: data-testid attributes, and <body data-ready="true"> once the first render is done.

const $ = (testId) => document.querySelector(`[data-testid="${testId}"]`);

function money(cents) {
  return `$${(cents / 100).toFixed(2)}`;
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error ?? `${method} ${path} failed with ${response.status}`);
  return data;
}

function el(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "onClick") node.addEventListener("click", value);
    else node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

function button(testId, label, action) {
  return el("button", { type: "button", "data-testid": testId, onClick: () => run(action) }, [label]);
}

function renderProducts(products) {
  $("products").replaceChildren(
    ...products.map((product) =>
      el("li", { "data-testid": `product-${product.id}` }, [
        el("span", { class: "name" }, [`${product.name} — ${money(product.priceCents)}`]),
        button(`add-to-cart-${product.id}`, "Add to cart", () =>
          api("POST", "/api/cart/items", { productId: product.id, quantity: 1 }),
        ),
        button(`add-to-wishlist-${product.id}`, "Add to wishlist", () =>
          api("POST", "/api/wishlist", { productId: product.id }),
        ),
      ]),
    ),
  );
}

function renderWishlist(wishlist) {
  const items = wishlist.items.map((product) =>
    el("li", { "data-testid": `wishlist-item-${product.id}` }, [
      el("span", { class: "name" }, [product.name]),
      button(`move-to-cart-${product.id}`, "Move to cart", () =>
        api("POST", `/api/wishlist/${encodeURIComponent(product.id)}/move-to-cart`),
      ),
      button(`remove-from-wishlist-${product.id}`, "Remove", () =>
        api("DELETE", `/api/wishlist/${encodeURIComponent(product.id)}`),
      ),
    ]),
  );
  $("wishlist").replaceChildren(...(items.length > 0 ? items : [emptyNote("Your wishlist is empty.")]));
}

function renderCart(cart) {
  const items = cart.items.map((item) =>
    el("li", { "data-testid": `cart-item-${item.productId}` }, [
      el("span", { class: "name" }, [`${item.name} × ${item.quantity}`]),
      el("span", { "data-testid": `cart-item-total-${item.productId}` }, [money(item.lineTotalCents)]),
      button(`remove-from-cart-${item.productId}`, "Remove", () =>
        api("DELETE", `/api/cart/items/${encodeURIComponent(item.productId)}`),
      ),
    ]),
  );
  $("cart").replaceChildren(...(items.length > 0 ? items : [emptyNote("Your cart is empty.")]));
  $("cart-total").textContent = money(cart.totalCents);
}

function emptyNote(text) {
  return el("li", { class: "empty" }, [text]);
}

async function refresh() {
  const [wishlist, cart] = await Promise.all([api("GET", "/api/wishlist"), api("GET", "/api/cart")]);
  renderWishlist(wishlist);
  renderCart(cart);
}

/** Runs a change, then re-renders wishlist and cart from the server. */
async function run(action) {
  $("error").textContent = "";
  try {
    await action();
  } catch (error) {
    $("error").textContent = error.message;
  }
  try {
    await refresh();
  } catch (error) {
    $("error").textContent = error.message;
  }
}

async function start() {
  try {
    const { products } = await api("GET", "/api/products");
    renderProducts(products);
    await refresh();
  } catch (error) {
    $("error").textContent = error.message;
  }
  document.body.dataset.ready = "true";
}

start();
