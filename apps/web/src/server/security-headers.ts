/**
 * Headers every response of the web app carries (next.config.ts). Above all, no other site may put
 * a page of ours in a frame: an invisible frame over "Approve this tree" would let it borrow an
 * approver's click (frame-ancestors, and X-Frame-Options for browsers that predate it).
 *
 * The policy fits what the pages load: scripts and styles only from this origin, with inline ones
 * allowed because Next.js inlines its bootstrap and mermaid and the charts set inline styles on
 * the SVG they draw; pictures also from data: and blob: URLs (screenshots, drawn charts); requests
 * only back to this origin. `next dev` also evaluates code for its fast refresh, so development
 * adds 'unsafe-eval' and nothing else.
 */
export function contentSecurityPolicy(dev: boolean): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'unsafe-inline'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self'${dev ? " ws: wss:" : ""}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

export function securityHeaders(dev: boolean): { key: string; value: string }[] {
  return [
    { key: "Content-Security-Policy", value: contentSecurityPolicy(dev) },
    { key: "X-Frame-Options", value: "DENY" },
    { key: "X-Content-Type-Options", value: "nosniff" },
    { key: "Referrer-Policy", value: "same-origin" },
  ];
}
