import { createServer, isIP } from "node:net";

/**
 * True when `host:port` can be listened on: we bind it, then let go. Check the address the server
 * will bind (HOST): on Linux that also fails when something holds the port on the wildcard address
 * (0.0.0.0 or ::), and a check of 127.0.0.1 fails when 0.0.0.0 is taken, and the other way round.
 */
export async function isPortFree(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no free port"))));
    });
  });
}

const WILDCARDS = new Set(["0.0.0.0", "::", "[::]"]);

/**
 * Where this machine reaches a server listening on `host`: the address itself, or 127.0.0.1 for the
 * wildcard addresses (both accept IPv4 loopback). An IPv6 literal gets its brackets.
 */
export function localAddress(host: string): string {
  if (WILDCARDS.has(host)) return "127.0.0.1";
  return isIP(host) === 6 ? `[${host}]` : host;
}
