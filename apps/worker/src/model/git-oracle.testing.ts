import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";

/**
 * Test support only: command-line git reading a repository for the promotion model's invariants
 * (docs/model-check.md), kept running for a whole run (`git cat-file --batch`) so that asking after
 * every command costs no process start. It shares no code with the product's git store
 * (isomorphic-git): main as git resolves it, and the first parents from there down to the root.
 */
export class GitOracle {
  private readonly git: ChildProcessWithoutNullStreams;
  private buffer = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  private failed: Error | null = null;

  constructor(gitdir: string) {
    this.git = spawn("git", ["-C", gitdir, "cat-file", "--batch"], {
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    });
    this.git.stdout.on("data", (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.waiting?.();
    });
    this.git.on("error", (err) => {
      this.failed = err;
      this.waiting?.();
    });
    this.git.on("close", () => {
      this.failed ??= new Error("git cat-file ended");
      this.waiting?.();
    });
  }

  /** main's first-parent history, oldest first: what main is, and every commit it came through. */
  async firstParents(): Promise<string[]> {
    const chain: string[] = [];
    let next: string | null = "refs/heads/main";
    while (next) {
      const commit = await this.read(next);
      chain.push(commit.oid);
      next = /^parent ([0-9a-f]{40})$/m.exec(commit.body)?.[1] ?? null;
    }
    return chain.reverse();
  }

  close(): void {
    this.git.stdin.end();
    this.git.kill();
  }

  /** One object: `<oid> <type> <size>\n<body>\n` on git's output. */
  private async read(name: string): Promise<{ oid: string; body: string }> {
    this.git.stdin.write(`${name}\n`);
    for (;;) {
      if (this.failed) throw this.failed;
      const eol = this.buffer.indexOf(10);
      if (eol >= 0) {
        const header = this.buffer.subarray(0, eol).toString();
        const [oid = "", type, size, ...rest] = header.split(" ");
        if (size === undefined || rest.length > 0) throw new Error(`git cat-file: ${name}: ${header}`);
        const end = eol + 1 + Number(size) + 1;
        if (this.buffer.length >= end) {
          const body = this.buffer.subarray(eol + 1, end - 1).toString();
          this.buffer = this.buffer.subarray(end);
          if (type !== "commit") throw new Error(`git cat-file: ${name} is a ${type}`);
          return { oid, body };
        }
      }
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
      this.waiting = null;
    }
  }
}
