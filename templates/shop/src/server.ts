// The HTTP server: the JSON API under /api/ and the static page from public/.
// Run with `npm start`; listens on PORT (default 8080), or on the Unix socket LISTEN_PATH when set.

import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { handleApi } from "./app.js";
import { ShopError } from "./errors.js";
import { createStore, type Store } from "./handlers.js";

/** public/ at the project root; this file runs from dist/src/. */
const PUBLIC_DIR = fileURLToPath(new URL("../../public/", import.meta.url));
const MAX_BODY_BYTES = 64 * 1024;
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

export function createShopServer(store: Store = createStore()): Server {
  return createServer((request, response) => {
    respond(store, request, response).catch((error: unknown) => {
      console.error(error);
      if (!response.headersSent) sendJson(response, 500, { error: "internal error" });
      else response.end();
    });
  });
}

/** Starts listening and resolves with the bound port (pass 0 for any free port). */
export function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolvePort, reject) => {
    server.once("error", reject);
    server.listen(port, () => {
      const address = server.address();
      resolvePort(typeof address === "object" && address !== null ? address.port : port);
    });
  });
}

/** Starts listening on a Unix domain socket (the browser check reaches the app this way). */
export function listenOnSocket(server: Server, path: string): Promise<void> {
  return new Promise((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolveListen());
  });
}

export function close(server: Server): Promise<void> {
  return new Promise((resolveClose, reject) => {
    server.close((error) => (error ? reject(error) : resolveClose()));
  });
}

async function respond(store: Store, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const method = request.method ?? "GET";
  const url = request.url ?? "/";
  try {
    if (url === "/api" || url.startsWith("/api/") || url.startsWith("/api?")) {
      const body = await readJsonBody(request);
      const result = handleApi(store, { method, url, headers: request.headers, body });
      sendJson(response, result.status, result.body);
      return;
    }
    if (method !== "GET" && method !== "HEAD") throw new ShopError(405, `${method} is not allowed`);
    await serveStatic(response, new URL(url, "http://shop.invalid").pathname, method === "HEAD");
  } catch (error) {
    if (!(error instanceof ShopError)) throw error;
    sendJson(response, error.status, { error: error.message });
  }
}

/** Serves a file directly inside public/. Names with slashes or ".." never match. */
async function serveStatic(response: ServerResponse, pathname: string, headOnly: boolean): Promise<void> {
  const name = pathname === "/" ? "index.html" : pathname.slice(1);
  const contentType = CONTENT_TYPES[extname(name)];
  if (!/^[\w-]+(\.[\w-]+)+$/.test(name) || contentType === undefined) {
    throw new ShopError(404, `not found: ${pathname}`);
  }
  let content: Uint8Array;
  try {
    content = await readFile(join(PUBLIC_DIR, name));
  } catch {
    throw new ShopError(404, `not found: ${pathname}`);
  }
  response.statusCode = 200;
  response.setHeader("content-type", contentType);
  response.setHeader("cache-control", "no-store");
  response.setHeader("x-content-type-options", "nosniff");
  response.end(headOnly ? undefined : content);
}

async function readJsonBody(request: IncomingMessage): Promise<unknown> {
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  for await (const chunk of request) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw new ShopError(413, `request body over ${MAX_BODY_BYTES} bytes`);
    text += decoder.decode(chunk, { stream: true });
  }
  text += decoder.decode();
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ShopError(400, "request body is not valid JSON");
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.statusCode = status;
  response.setHeader("content-type", "application/json; charset=utf-8");
  response.setHeader("cache-control", "no-store");
  response.end(JSON.stringify(body));
}

function isMainModule(): boolean {
  const entry = process.argv[1];
  return entry !== undefined && resolve(entry) === fileURLToPath(import.meta.url);
}

if (isMainModule()) {
  const server = createShopServer();
  const socketPath = process.env.LISTEN_PATH;
  if (socketPath) {
    await listenOnSocket(server, socketPath);
    console.log(`demo-shop listening on ${socketPath}`);
  } else {
    const port = await listen(server, Number(process.env.PORT ?? 8080));
    console.log(`demo-shop listening on http://localhost:${port}`);
  }
  const stop = () => {
    server.close();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
