import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import {
  candidatesOf,
  createChange,
  provisionedProject,
  waitUntil,
  writeTask,
} from "../landing/fixtures/landing-api.ts";

/**
 * No other site may show our pages in a frame: a Candidate page in an invisible frame over a button
 * of theirs would borrow an approver's click on "Approve this tree". Every page says so in its
 * headers, and Chromium, the browser people use, refuses the frame.
 */

/** A page of another origin (127.0.0.1 on a port of its own) that frames `target`, and one of its own pages. */
async function otherSite(target: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    if (req.url === "/own") res.end("<p id=own>a page of the other site</p>");
    else
      res.end(`<iframe id=ours src="${target}" width=800 height=600></iframe><iframe id=theirs src="/own"></iframe>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

test("every page forbids framing and sniffing and keeps its address from other sites", async ({ request }) => {
  for (const path of ["/", "/sign-in", "/api/health"]) {
    const res = await request.get(path, { maxRedirects: 0 });
    const h = res.headers();
    expect(h["content-security-policy"], path).toContain("frame-ancestors 'none'");
    expect(h["content-security-policy"], path).toContain("default-src 'self'");
    expect(h["x-frame-options"], path).toBe("DENY");
    expect(h["x-content-type-options"], path).toBe("nosniff");
    expect(h["referrer-policy"], path).toBe("same-origin");
  }
});

test("a Candidate page inside another site's frame is refused, while that site's own frame loads", async ({
  page,
  baseURL,
}) => {
  test.setTimeout(240_000);
  const api = page.request;
  const projectId = await provisionedProject(api, "framing");
  const changeId = await createChange(api, projectId, {
    title: "Add src/framed.ts",
    tasks: [writeTask("a", "src/framed.ts", "export const framed = true;\n")],
    land: false,
  });
  const [candidate] = await waitUntil(
    "a Candidate composed",
    () => candidatesOf(api, changeId),
    (rows) => rows.length > 0,
    180_000,
  );
  const target = `${baseURL}/projects/${projectId}/candidates/${candidate?.id}`;
  // The page itself opens for the signed-in approver: what is refused is the frame, not the page.
  await page.goto(target);
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible({ timeout: 30_000 });

  const blocked: string[] = [];
  page.on("console", (m) => {
    if (/frame-ancestors|X-Frame-Options/i.test(m.text())) blocked.push(m.text());
  });
  const site = await otherSite(target);
  try {
    await page.goto(site.url);
    // The other site's own frame loads: frames work on that page, so only ours was refused.
    await expect(page.frameLocator("#theirs").locator("#own")).toHaveText("a page of the other site");
    // Chromium says why it refused the frame: our own header, named.
    await expect
      .poll(() => blocked, { timeout: 30_000 })
      .toContainEqual(expect.stringContaining("frame-ancestors 'none'"));
    await expect(page.frameLocator("#ours").getByRole("heading", { level: 1 })).toHaveCount(0);
  } finally {
    await new Promise((r) => site.server.close(r));
  }
});
