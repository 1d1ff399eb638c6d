"use client";

// A type-only import: the router's code (and Prisma with it) never reaches the browser bundle.
import type { AppRouter } from "@rhumbatron/api";
import { QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { type ReactNode, useState } from "react";
import superjson from "superjson";
import { getQueryClient } from "./query-client.ts";

export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();

function trpcUrl(): string {
  // In the browser a relative URL; during a server render (no queries run there yet) an absolute one.
  if (typeof window !== "undefined") return "/api/trpc";
  return `http://127.0.0.1:${process.env.PORT ?? 3000}/api/trpc`;
}

export function TRPCReactProvider({ children }: { children: ReactNode }) {
  const queryClient = getQueryClient();
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        // Subscriptions (the live project feed) run over server-sent events; everything else is batched.
        splitLink({
          condition: (op) => op.type === "subscription",
          true: httpSubscriptionLink({ url: trpcUrl(), transformer: superjson }),
          false: httpBatchLink({ url: trpcUrl(), transformer: superjson }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
