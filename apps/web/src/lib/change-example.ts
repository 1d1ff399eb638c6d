import type { ChangeDraft } from "./change-form.ts";

/** The line of templates/shop/public/app.js that renders the wishlist, and the line the example adds after it. */
const RENDER_LINE =
  '  $("wishlist").replaceChildren(...(items.length > 0 ? items : [emptyNote("Your wishlist is empty.")]));\n';
// biome-ignore lint/suspicious/noTemplateCurlyInString: the page script's own source text, not a template here
const COUNT_LINE = '  $("wishlist-count").textContent = `(${items.length})`;\n';

/**
 * A complete, valid Change against the project template (templates/shop): the wishlist section
 * shows how many products are saved. Its scripted edit plans apply to the template as provisioned,
 * and keep every test hook the browser check uses.
 */
export function wishlistExample(): ChangeDraft {
  return {
    title: "Wishlist page: show how many products are saved",
    description:
      "The wishlist heading shows a live count, and the empty wishlist explains how to save a product for later.",
    riskTier: "low",
    p95LatencyMs: "200",
    invariants: "The cart total always equals the sum of its line totals",
    added: "",
    removed: "",
    changed: "",
    tasks: [
      {
        key: "heading",
        title: "Add a count to the wishlist heading",
        dependsOn: [],
        paths: "public/index.html",
        prefixes: "",
        editPlan: [
          {
            op: "replace",
            path: "public/index.html",
            find: '<h2 id="wishlist-heading">Wishlist</h2>',
            replace: '<h2 id="wishlist-heading">Wishlist <span data-testid="wishlist-count">(0)</span></h2>',
          },
        ],
      },
      {
        key: "count",
        title: "Keep the count up to date",
        dependsOn: ["heading"],
        paths: "public/app.js",
        prefixes: "",
        editPlan: [
          {
            op: "replace",
            path: "public/app.js",
            find: RENDER_LINE,
            replace: RENDER_LINE + COUNT_LINE,
          },
        ],
      },
      {
        key: "empty-note",
        title: "Explain how to save a product",
        dependsOn: ["count"],
        paths: "public/app.js",
        prefixes: "",
        editPlan: [
          {
            op: "replace",
            path: "public/app.js",
            find: '"Your wishlist is empty."',
            replace: '"Your wishlist is empty. Use Add to wishlist to save a product for later."',
          },
        ],
      },
      {
        key: "check",
        title: "Check the page script still parses",
        dependsOn: ["empty-note"],
        paths: "",
        prefixes: "public/",
        editPlan: [{ op: "run", argv: "node --check public/app.js" }],
      },
    ],
  };
}
