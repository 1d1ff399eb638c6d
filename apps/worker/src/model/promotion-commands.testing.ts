import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import type { PromoteResult } from "@rhumbatron/db";
import fc from "fast-check";
import { composeAnswer, outcomeOf, promoteAnswer, refusal } from "./promotion-answers.testing.ts";
import { candidateIndex, checkInvariants, type RunState } from "./promotion-invariants.testing.ts";
import type { Answer, Model } from "./promotion-model.testing.ts";
import * as M from "./promotion-model.testing.ts";
import {
  realCancel,
  realCompose,
  realCreate,
  realDecide,
  realPromote,
  realVerify,
  type Seen,
  withCrash,
} from "./promotion-steps.testing.ts";
import { MAX_CHANGES } from "./promotion-world.testing.ts";

/**
 * Test support only: the commands of the promotion model (docs/model-check.md). Each one asks the
 * model what the answer must be, does the same for real (promotion-steps.testing.ts), compares the
 * two answers, then checks the invariants (promotion-invariants.testing.ts). A command names the
 * Change or Candidate it acts on by a number taken modulo those it may act on, so shrinking keeps
 * the sequence meaningful.
 */
type Cmd = fc.AsyncCommand<Model, RunState>;
type Outcome = { expected: unknown; actual: unknown; promotions?: number };

const nth = <T>(list: readonly T[], pick: number): T => list[pick % list.length] as T;
/**
 * The targets a command may pick from: the ones that can move on when it asks for those (`want`),
 * else any. A command whose list is empty does not apply, and is skipped.
 */
const among = (want: boolean, preferred: number[], all: number[]) => (want ? preferred : all);
const candidates = (m: Readonly<Model>, ok: (c: M.ModelCandidate) => boolean) =>
  m.candidates.flatMap((c, i) => (ok(c) ? [i] : []));
const all = (m: Readonly<Model>) => candidates(m, () => true);
const realId = (ids: string[], index: number) => {
  const id = ids[index];
  if (!id) throw new Error(`no real ID for index ${index}`);
  return id;
};

abstract class Step implements Cmd {
  /** What the command acts on in the run under way (the run's trace names it). */
  protected on = "";
  abstract check(m: Readonly<Model>): boolean;
  protected abstract step(m: Model, r: RunState): Promise<Outcome>;
  protected abstract name(): string;
  /** The command's kind, for the tally of outcomes. */
  protected abstract kind: string;
  /** Runs the command; a failure says the whole run as it went, each command with what it acted on. */
  async run(m: Model, r: RunState): Promise<void> {
    try {
      await this.compared(m, r);
    } catch (err) {
      const trace = r.trace.map((line, i) => `  ${i + 1}. ${line}`).join("\n");
      if (err instanceof Error) err.message = `${err.message}\nThe run, as it went:\n${trace}`;
      throw err;
    }
  }
  private async compared(m: Model, r: RunState): Promise<void> {
    const t0 = Date.now();
    const o = await this.step(m, r).finally(() => r.trace.push(`${this.name()}${this.on}`));
    const t1 = Date.now();
    r.stats.commands += 1;
    const key = `${this.kind}: ${outcomeOf(o.actual)}`;
    r.stats.outcomes[key] = (r.stats.outcomes[key] ?? 0) + 1;
    r.trace[r.trace.length - 1] += ` -> ${outcomeOf(o.actual)}`;
    assert.deepEqual(
      o.actual,
      o.expected,
      `${this.name()}${this.on}: the real system answered otherwise than the model`,
    );
    await checkInvariants(r, m, o.promotions ?? 0);
    r.stats.ms[this.kind] = (r.stats.ms[this.kind] ?? 0) + t1 - t0;
    r.stats.ms.invariants = (r.stats.ms.invariants ?? 0) + Date.now() - t1;
  }
  /** Its parameters only (fast-check prints it in a counterexample; the run's trace says what it acted on). */
  toString(): string {
    return this.name();
  }
}

const crashNote = (crash: number | null) => (crash === null ? "" : ` (crash at clock reading ${crash})`);

class CreateChange extends Step {
  protected kind = "create";
  constructor(readonly shape: { tasks: number; shared: boolean; risk: M.Risk }) {
    super();
  }
  name(): string {
    return `create(${this.shape.tasks} Task(s), ${this.shape.risk}${this.shape.shared ? ", README.md" : ""})`;
  }
  check(m: Readonly<Model>): boolean {
    return m.changes.length < MAX_CHANGES;
  }
  async step(m: Model, r: RunState): Promise<Outcome> {
    const expected = M.createChange(m, this.shape);
    r.changes.push(await realCreate(r.world, r.projectId, r.changes.length, this.shape));
    return { expected, actual: { kind: "change", change: r.changes.length - 1 } };
  }
}

/** candidate.create for a Change whose Tasks completed (with `late`, also for a cancelled one: a command delivered late). */
class Compose extends Step {
  protected kind = "compose";
  constructor(
    readonly pick: number,
    readonly crash: number | null,
    readonly late: boolean,
    readonly fresh: boolean,
  ) {
    super();
  }
  name(): string {
    return `compose${crashNote(this.crash)}`;
  }
  eligible(m: Readonly<Model>): number[] {
    return m.changes.flatMap((c, i) =>
      c.status === "verifying" || (this.late && c.status === "cancelled") ? [i] : [],
    );
  }
  check(m: Readonly<Model>): boolean {
    return this.targets(m).length > 0;
  }
  /**
   * Its Changes: with `fresh`, those with no Candidate on the current generation yet (with `late`,
   * the cancelled ones among them).
   */
  targets(m: Readonly<Model>): number[] {
    const eligible = this.eligible(m);
    const uncomposed = eligible.filter((i) => !m.candidates.some((c) => c.change === i && c.base === m.generation));
    const late = uncomposed.filter((i) => m.changes[i]?.status === "cancelled");
    return among(this.fresh, this.late ? late : uncomposed, eligible);
  }
  async step(m: Model, r: RunState): Promise<Outcome> {
    const change = nth(this.targets(m), this.pick);
    this.on = ` Change ${change}`;
    const expected = M.compose(m, change);
    const seen = {};
    if (await withCrash(r, this.crash, () => realCompose(r.world, realId(r.changes, change), undefined, seen)))
      this.on += ", crashed and ran again";
    return { expected, actual: composeAnswer(r, seen) };
  }
}

/** candidate.create from a stale Candidate, on the generation canonical is at now. */
class Recompose extends Step {
  protected kind = "recompose";
  constructor(
    readonly pick: number,
    readonly crash: number | null,
  ) {
    super();
  }
  name(): string {
    return `recompose${crashNote(this.crash)}`;
  }
  check(m: Readonly<Model>): boolean {
    return candidates(m, (c) => c.status === "stale").length > 0;
  }
  async step(m: Model, r: RunState): Promise<Outcome> {
    const stale = nth(
      candidates(m, (c) => c.status === "stale"),
      this.pick,
    );
    this.on = ` Candidate ${stale}`;
    const change = realId(r.changes, m.candidates[stale]?.change ?? -1);
    const expected = M.recompose(m, stale);
    const seen = {};
    const from = { from: realId(r.candidates, stale), generation: r.generation };
    if (await withCrash(r, this.crash, () => realCompose(r.world, change, from, seen)))
      this.on += ", crashed and ran again";
    return { expected, actual: composeAnswer(r, seen) };
  }
}

class Verify extends Step {
  protected kind = "verify";
  constructor(
    readonly pick: number,
    readonly verdict: "pass" | "fail",
    readonly crash: number | null,
  ) {
    super();
  }
  name(): string {
    return `verify(${this.verdict})${crashNote(this.crash)}`;
  }
  check(m: Readonly<Model>): boolean {
    return candidates(m, (c) => c.status === "verifying").length > 0;
  }
  async step(m: Model, r: RunState): Promise<Outcome> {
    const index = nth(
      candidates(m, (c) => c.status === "verifying"),
      this.pick,
    );
    this.on = ` Candidate ${index}`;
    const expected = M.verify(m, index, this.verdict);
    const seen: Seen<"verified" | "rejected"> = {};
    if (await withCrash(r, this.crash, () => realVerify(r.world, realId(r.candidates, index), this.verdict, seen)))
      this.on += ", crashed and ran again";
    return { expected, actual: { kind: "verdict", status: seen.first } };
  }
}

/** An approver's decision, for the Candidate's own composed tree or for another tree (another Candidate's). */
class Decide extends Step {
  protected kind = "decide";
  constructor(
    readonly pick: number,
    readonly q: { kind: "granted" | "rejected"; own: boolean; by: string },
    readonly ready: boolean,
  ) {
    super();
  }
  name(): string {
    return `${this.q.kind === "granted" ? "approve" : "reject"}(${this.q.own ? "its tree" : "another tree"}, ${this.q.by})`;
  }
  /** With `ready`, the Candidates waiting for a person: verified, behind the human gate, undecided. */
  targets(m: Readonly<Model>): number[] {
    const waiting = candidates(m, (c) => c.status === "verified" && M.gated(m, c) && !c.approval);
    return among(this.ready, waiting, all(m));
  }
  check(m: Readonly<Model>): boolean {
    return this.targets(m).length > 0;
  }
  async step(m: Model, r: RunState): Promise<Outcome> {
    const index = nth(this.targets(m), this.pick);
    this.on = ` Candidate ${index}`;
    const expected = M.decide(m, index, this.q);
    const id = realId(r.candidates, index);
    const trees = await r.world.db.candidate.findMany({ where: { projectId: r.projectId } });
    const own = trees.find((c) => c.id === id)?.composedTree ?? "0".repeat(40);
    const other = trees.find((c) => c.composedTree && c.composedTree !== own)?.composedTree ?? "e".repeat(40);
    const res = await realDecide(r.world, id, { ...this.q, treeHash: this.q.own ? own : other });
    const actual: Answer =
      "refused" in res ? refusal(res) : { kind: "decided", decision: res.decision.kind, already: res.already };
    return { expected, actual };
  }
}

class Promote extends Step {
  protected kind = "promote";
  constructor(
    readonly pick: number,
    readonly crash: number | null,
    readonly ready: boolean,
  ) {
    super();
  }
  name(): string {
    return `promote${crashNote(this.crash)}`;
  }
  /** With `ready`, the Candidates a promotion moves: verified ones, and live ones canonical left behind (they go stale). */
  targets(m: Readonly<Model>): number[] {
    const moves = candidates(m, (c) => c.status === "verified" || (M.LIVE.includes(c.status) && c.base < m.generation));
    return among(this.ready, moves, all(m));
  }
  check(m: Readonly<Model>): boolean {
    return this.targets(m).length > 0;
  }
  async step(m: Model, r: RunState): Promise<Outcome> {
    const index = nth(this.targets(m), this.pick);
    this.on = ` Candidate ${index}`;
    const expected = M.promote(m, index);
    const seen: Seen<PromoteResult> & { again?: PromoteResult } = {};
    if (await withCrash(r, this.crash, () => realPromote(r.world, r.projectId, realId(r.candidates, index), seen)))
      this.on += ", crashed and ran again";
    const actual = promoteAnswer(seen.first);
    if (seen.again) {
      // Retried after it answered: a promotion is found again (its idempotency key), anything else repeats.
      const again = actual?.kind === "promoted" ? { kind: "alreadyPromoted", generation: actual.generation } : actual;
      assert.deepEqual(promoteAnswer(seen.again), again, `${this.toString()}: the retry answered otherwise`);
    }
    return { expected, actual, promotions: actual?.kind === "promoted" ? 1 : 0 };
  }
}

/** Two promotions at once (the same Candidate twice, or two): the answers of one order or the other. */
class Race extends Step {
  protected kind = "race";
  constructor(
    readonly a: number,
    readonly b: number,
  ) {
    super();
  }
  name(): string {
    return "promote two at once";
  }
  check(m: Readonly<Model>): boolean {
    return m.candidates.length > 0;
  }
  async step(m: Model, r: RunState): Promise<Outcome> {
    const [a, b] = [this.a % m.candidates.length, this.b % m.candidates.length];
    this.on = ` Candidates ${a} and ${b}`;
    const orders = M.race(m, a, b);
    const seen: [Seen<PromoteResult>, Seen<PromoteResult>] = [{}, {}];
    await Promise.all([a, b].map((i, n) => realPromote(r.world, r.projectId, realId(r.candidates, i), seen[n] ?? {})));
    const actual = seen.map((s) => promoteAnswer(s.first));
    const order = orders.find((o) => isDeepStrictEqual(o.answers, actual)) ?? orders[0];
    if (!order) throw new Error("no order");
    M.adopt(m, order.model);
    return { expected: order.answers, actual, promotions: actual.filter((x) => x?.kind === "promoted").length };
  }
}

class Cancel extends Step {
  protected kind = "cancel";
  constructor(readonly pick: number) {
    super();
  }
  name(): string {
    return "cancel";
  }
  check(m: Readonly<Model>): boolean {
    return m.changes.length > 0;
  }
  async step(m: Model, r: RunState): Promise<Outcome> {
    const change = this.pick % m.changes.length;
    this.on = ` Change ${change}`;
    const expected = M.cancel(m, change);
    const res = await realCancel(r.world, realId(r.changes, change));
    const actual: Answer =
      "refused" in res
        ? refusal(res)
        : { kind: "cancelled", candidates: res.candidates.map((id) => candidateIndex(r, id)).sort((x, y) => x - y) };
    return { expected, actual };
  }
}

/**
 * A run: one or two Changes made and composed, one Candidate verified, then up to `maxCommands` more. `late`:
 * composing a cancelled Change too (candidate.create delivered after the cancel; docs/model-check.md,
 * What it found). `replayPath`: fast-check's, to replay a failure.
 */
export function promotionCommands(o: {
  maxCommands: number;
  late: boolean;
  replayPath?: string;
}): fc.Arbitrary<Iterable<Cmd>> {
  const pick = fc.nat({ max: 60 });
  // Now and then a crash, at one of the clock readings the command makes (a composition makes about
  // 8, a verification 5, a promotion with its source sync up to 30).
  const crashAt = (readings: number) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: readings }) },
    );
  const crash = crashAt(10);
  const create = fc
    .record({
      tasks: fc.integer({ min: 1, max: 2 }),
      shared: fc.boolean(),
      risk: fc.constantFrom<M.Risk>("low", "high"),
    })
    .map((s): Cmd => new CreateChange(s));
  const decision = fc.record({
    kind: fc.constantFrom<"granted" | "rejected">("granted", "granted", "rejected"),
    own: fc.constantFrom(true, true, true, false),
    by: fc.constantFrom("usr_ada", "usr_bo"),
  });
  const verdict = fc.constantFrom<"pass" | "fail">("pass", "pass", "pass", "fail");
  /** Toward the Candidate (or Change) that can move on; now and then any. */
  const mostly = fc.constantFrom(true, true, false);
  const compose = fc.tuple(pick, crash, mostly).map(([p, c, f]): Cmd => new Compose(p, c, o.late, f));
  const verify = fc.tuple(pick, verdict, crashAt(6)).map(([p, v, c]): Cmd => new Verify(p, v, c));
  // Weighted toward the steps a Change takes to land. A command that does not apply yet (no
  // Candidate verifying, none stale) is skipped and costs nothing, so those weigh most.
  const command: fc.Arbitrary<Cmd> = fc.oneof(
    { weight: 1, arbitrary: create },
    { weight: 2, arbitrary: compose },
    { weight: 8, arbitrary: verify },
    { weight: 4, arbitrary: fc.tuple(pick, decision, mostly).map(([p, q, r]): Cmd => new Decide(p, q, r)) },
    { weight: 6, arbitrary: fc.tuple(pick, crashAt(30), mostly).map(([p, c, r]): Cmd => new Promote(p, c, r)) },
    { weight: 8, arbitrary: fc.tuple(pick, crash).map(([p, c]): Cmd => new Recompose(p, c)) },
    { weight: 2, arbitrary: fc.tuple(pick, pick).map(([a, b]): Cmd => new Race(a, b)) },
    { weight: o.late ? 4 : 1, arbitrary: pick.map((p): Cmd => new Cancel(p)) },
  );
  // Each Change made first is composed first too (a composition picks a Change not yet composed),
  // and one Candidate verified, so the commands after them start where a Change can land.
  const first = fc.tuple(fc.array(fc.tuple(create, compose), { minLength: 1, maxLength: 2 }), verify);
  const rest = fc.commands([command], { maxCommands: o.maxCommands, size: "max", replayPath: o.replayPath });
  return fc.tuple(first, rest).map(([[pairs, verified], rest]) => {
    const opening = [...pairs.map(([made]) => made), ...pairs.map(([, composed]) => composed), verified];
    return {
      *[Symbol.iterator]() {
        yield* opening;
        yield* rest;
      },
      // fast-check's own for the commands part: it carries the replayPath a replay needs.
      toString: () => opening.map(String).concat(String(rest)).join(","),
    };
  });
}
