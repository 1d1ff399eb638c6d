import type { Entry } from "./compose-trees.ts";

/** A ChangeSet as a conflict names it. */
export interface Ref {
  changeSetId: string;
  taskKey: string;
}

/** The tree being composed, as a flat path -> entry map, and what each ChangeSet did to it. */
export class Running {
  /** Every path ever written, so unchanged directories keep their tree ids. */
  readonly dirty = new Set<string>();
  private readonly below = new Map<string, number>();
  /** Old path -> the path its file has now, for files renamed in this composition. */
  private readonly moved = new Map<string, string>();
  /** Sources of renames that conflicted, and their targets. */
  readonly lost = new Map<string, string>();
  private readonly changedBy = new Map<string, Ref[]>();

  readonly files: Map<string, Entry>;

  constructor(start: Map<string, Entry>) {
    this.files = new Map(start);
    for (const p of start.keys()) this.count(p, 1);
  }

  put(path: string, entry: Entry | undefined, ref: Ref) {
    const had = this.files.has(path);
    if (entry) this.files.set(path, entry);
    else this.files.delete(path);
    if (had !== (entry !== undefined)) this.count(path, entry ? 1 : -1);
    // A deleted file is gone for good: a file added here later is another file.
    if (!entry) for (const [old, at] of this.moved) if (at === path) this.moved.delete(old);
    this.dirty.add(path);
    this.note(path, [ref]);
  }

  move(from: string, to: string, entry: Entry | undefined, ref: Ref) {
    const followers = [...this.moved].filter(([, at]) => at === from).map(([old]) => old);
    this.note(to, this.refs([from]));
    this.put(from, undefined, ref);
    this.put(to, entry, ref);
    for (const old of [...followers, from]) this.moved.set(old, to);
  }

  /** Where a path's file is now: at the path, or where renames in this composition took it. */
  locate(path: string): string | undefined {
    if (this.files.has(path)) return path;
    const at = this.moved.get(path);
    return at !== undefined && this.files.has(at) ? at : undefined;
  }

  /**
   * Git cannot hold a file where a parent path is a file, or where files lie below it; `leaving`
   * is a file about to move away (a file may become a directory of the same name, or back).
   */
  collides(path: string, leaving?: string): boolean {
    const inside = leaving?.startsWith(`${path}/`) ? 1 : 0;
    if ((this.below.get(path) ?? 0) > inside) return true;
    for (let i = path.indexOf("/"); i > 0; i = path.indexOf("/", i + 1)) {
      const parent = path.slice(0, i);
      if (parent !== leaving && this.files.has(parent)) return true;
    }
    return false;
  }

  refs(paths: string[]): Ref[] {
    const out = new Map<string, Ref>();
    for (const p of paths) for (const r of this.changedBy.get(p) ?? []) out.set(r.changeSetId, r);
    return [...out.values()];
  }

  private note(path: string, refs: Ref[]) {
    const list = this.changedBy.get(path) ?? [];
    for (const r of refs) if (!list.some((x) => x.changeSetId === r.changeSetId)) list.push(r);
    this.changedBy.set(path, list);
  }

  private count(path: string, d: number) {
    for (let i = path.indexOf("/"); i > 0; i = path.indexOf("/", i + 1)) {
      const dir = path.slice(0, i);
      this.below.set(dir, (this.below.get(dir) ?? 0) + d);
    }
  }
}
