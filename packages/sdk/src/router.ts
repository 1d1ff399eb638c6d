import type { AppRouter as ServerRouter } from "@rhumbatron/api";
import type {
  AnyTRPCProcedure,
  AnyTRPCRouter,
  inferRouterOutputs,
  TRPCBuiltRouter,
  TRPCMutationProcedure,
  TRPCQueryProcedure,
  TRPCSubscriptionProcedure,
} from "@trpc/server";

/*
 * The API's router as this client calls it: every procedure's kind, input and output, and the error
 * shape, computed by the compiler from @rhumbatron/api's AppRouter. Two differences, both true of
 * this client:
 * - The server's context (database client, services, auth) is left out: a client never sees it,
 *   and keeping it would make the published declarations drag in the server's Prisma and auth types
 *   (docs/cli.md).
 * - A tenant's procedure takes `tenantId` as optional: the client fills in the tenant its
 *   credentials act in when the input names none (tenant-link.ts).
 *
 * The mapping is written inline (no named helper type) and applied in a call whose type is
 * inferred, so the declaration build writes the router out in full instead of naming
 * @rhumbatron/api. `clientRouterOf` exists only for the compiler: this module is imported with
 * `import type` alone, so it never loads at run time.
 */
declare function clientRouterOf<R extends AnyTRPCRouter>(): TRPCBuiltRouter<
  {
    ctx: object;
    meta: object;
    errorShape: R["_def"]["_config"]["$types"]["errorShape"];
    transformer: R["_def"]["_config"]["$types"]["transformer"];
  },
  {
    [K in keyof R["_def"]["record"]]: {
      [P in keyof R["_def"]["record"][K]]: R["_def"]["record"][K][P] extends {
        _def: { type: infer T; $types: { input: infer I; output: infer O } };
      }
        ? (
            I extends { tenantId: string }
              ? { [F in keyof I as F extends "tenantId" ? never : F]: I[F] } & { tenantId?: string }
              : I
          ) extends infer In
          ? T extends "query"
            ? TRPCQueryProcedure<{ input: In; output: O; meta: object }>
            : T extends "mutation"
              ? TRPCMutationProcedure<{ input: In; output: O; meta: object }>
              : TRPCSubscriptionProcedure<{ input: In; output: O; meta: object }>
          : never
        : never;
    };
  }
>;

const clientRouter = clientRouterOf<ServerRouter>();

/** The Rhumbatron API's router type as the typed client (`rbt.trpc`) calls it. */
export type AppRouter = typeof clientRouter;

/**
 * The mapping above reads two levels (resource router, then procedure). A path that is not a
 * procedure at the second level (a nested router) would be lost; this fails to compile first,
 * naming it.
 */
type NestedPaths = {
  [K in keyof ServerRouter["_def"]["record"]]: {
    [P in keyof ServerRouter["_def"]["record"][K]]: ServerRouter["_def"]["record"][K][P] extends AnyTRPCProcedure
      ? never
      : `${K & string}.${P & string}`;
  }[keyof ServerRouter["_def"]["record"][K]];
}[keyof ServerRouter["_def"]["record"]];
type OnlyProcedures<T extends never> = T;
type _RouterIsTwoLevels = OnlyProcedures<NestedPaths>;

/** Every procedure answers this client exactly what the server's router says it answers. */
type Identical<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type MustHold<T extends true> = T;
type _OutputsAreTheServers = MustHold<Identical<inferRouterOutputs<AppRouter>, inferRouterOutputs<ServerRouter>>>;
