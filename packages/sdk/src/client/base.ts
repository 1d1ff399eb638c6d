import type { TRPCClient } from "@trpc/client";
import type { AppRouter } from "../router.ts";
import type { ChangeDetail } from "./types.ts";

/** What every group of the client's methods is built from (createRhumbatronClient in ../client.ts). */
export interface ClientBase {
  /** The web app's address, without a trailing slash. */
  url: string;
  trpc: TRPCClient<AppRouter>;
  /** Runs one call and turns whatever it throws into a RhumbatronError. */
  call: <T>(fn: () => Promise<T>) => Promise<T>;
  /** The tenant the client acts in (asked once, then remembered). */
  tenantId: () => Promise<string>;
  getChange: (changeId: string) => Promise<ChangeDetail>;
}
