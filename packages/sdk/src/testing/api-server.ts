import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
// The API's real fetch handler, served without Next (tests only: the SDK itself imports types alone).
import { handleTrpcRequest, TRPC_ENDPOINT } from "@rhumbatron/api";
import { testServices } from "@rhumbatron/api/testing";
import type { Db } from "@rhumbatron/db";

export interface ApiServer {
  /** The base URL the SDK and the CLI take, e.g. http://127.0.0.1:41234. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the tRPC API on a node:http server at 127.0.0.1 on a free port, as the Next route does:
 * each Node request becomes a fetch Request for `handleTrpcRequest`. Other paths answer a plain 404,
 * which is what a wrong --url looks like.
 */
export async function startApiServer(db: Db): Promise<ApiServer> {
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`);
      if (!url.pathname.startsWith(`${TRPC_ENDPOINT}/`)) {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found");
        return;
      }
      const method = req.method ?? "GET";
      const body = method === "GET" || method === "HEAD" ? undefined : await readBody(req);
      const response = await handleTrpcRequest(new Request(url, { method, headers: headersOf(req), body }), {
        db: () => db,
        services: testServices,
      });
      res.statusCode = response.status;
      response.headers.forEach((value, name) => {
        if (name !== "set-cookie") res.setHeader(name, value);
      });
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) res.setHeader("set-cookie", cookies);
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (err) {
      res.writeHead(500, { "content-type": "text/plain" }).end(String(err));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
  }
  return headers;
}

async function readBody(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}
