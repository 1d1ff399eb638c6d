// Minimal type declarations for the Node.js built-ins this app uses.
//
// The template has no dependencies, so there is no @types/node. Web globals
// that Node also provides (fetch, URL, console, performance, TextDecoder,
// structuredClone, import.meta.url) come from the "DOM" lib in tsconfig.json.
// When you use another part of Node, declare it here.

declare var process: {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  exitCode: number | undefined;
  on(event: "SIGINT" | "SIGTERM", listener: () => void): void;
};

declare module "node:http" {
  export interface IncomingHttpHeaders {
    [name: string]: string | string[] | undefined;
  }

  export interface IncomingMessage extends AsyncIterable<Uint8Array> {
    readonly method?: string;
    readonly url?: string;
    readonly headers: IncomingHttpHeaders;
  }

  export interface ServerResponse {
    statusCode: number;
    readonly headersSent: boolean;
    setHeader(name: string, value: string | number): this;
    end(body?: string | Uint8Array): this;
  }

  export interface AddressInfo {
    address: string;
    family: string;
    port: number;
  }

  export interface Server {
    listen(port: number, callback?: () => void): this;
    listen(path: string, callback?: () => void): this;
    close(callback?: (error?: Error) => void): this;
    address(): AddressInfo | string | null;
    once(event: "error", listener: (error: Error) => void): this;
  }

  export function createServer(listener: (request: IncomingMessage, response: ServerResponse) => void): Server;
}

declare module "node:fs/promises" {
  export function readFile(path: string): Promise<Uint8Array>;
}

declare module "node:path" {
  export function extname(path: string): string;
  export function join(...paths: string[]): string;
  export function resolve(...paths: string[]): string;
}

declare module "node:url" {
  export function fileURLToPath(url: string | URL): string;
}

declare module "node:test" {
  type Body = () => void | Promise<void>;
  export function describe(name: string, body: () => void): void;
  export function it(name: string, body: Body): void;
  export function before(body: Body): void;
  export function after(body: Body): void;
}

declare module "node:assert/strict" {
  interface Assert {
    (value: unknown, message?: string): asserts value;
    ok(value: unknown, message?: string): asserts value;
    equal(actual: unknown, expected: unknown, message?: string): void;
    notEqual(actual: unknown, expected: unknown, message?: string): void;
    deepEqual(actual: unknown, expected: unknown, message?: string): void;
    match(value: string, pattern: RegExp, message?: string): void;
    throws(block: () => unknown, expected?: RegExp | object, message?: string): void;
  }
  const assert: Assert;
  export default assert;
}
