"use client";

import type { AppRouter } from "@rhumbatron/api";
import { bucketLabel, durationText } from "@rhumbatron/core";
import { useQuery } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { BarChart, CartesianGrid, Legend, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { useTRPC } from "../../trpc/client.tsx";
import { Empty, NotReady, Panel } from "../query-state.tsx";
import { Figure, METRIC_REFRESH, type MetricWindow, seriesElements } from "./chart-elements.tsx";
import { durationUnit, LANDING_SERIES, landingRows, QUEUE_DEPTH_SERIES, timeLabel } from "./chart-series.ts";

/** How long Changes took to land, and how deep the landing queue was, over the chosen window. */
export function LandingPanels({ tenantId, range, bucket }: MetricWindow) {
  const trpc = useTRPC();
  const landing = useQuery(trpc.metrics.landing.queryOptions({ tenantId, range, bucket }, METRIC_REFRESH));
  if (!landing.isSuccess) {
    return (
      <Panel title="Time to land" testId="landing-panel">
        <NotReady query={landing} testId="landing-metrics" what="landing times" label="Loading landing times…" />
      </Panel>
    );
  }
  const d = landing.data;
  return (
    <>
      <LandingTimePanel d={d} />
      <QueueDepthPanel d={d} />
    </>
  );
}

type Landing = inferRouterOutputs<AppRouter>["metrics"]["landing"];

/** The figures and the chart of how long Changes took from their request to landing. */
function LandingTimePanel({ d }: { d: Landing }) {
  const unit = durationUnit(Math.max(0, ...d.buckets.map((b) => b.p90Seconds ?? 0)));
  const rows = landingRows(d.buckets, d, d.bucket, unit);
  return (
    <Panel title={`Time to land, last ${d.range}`} testId="landing-panel">
      <div className="mb-3 grid grid-cols-2 gap-2 text-sm sm:grid-cols-5">
        <Figure label="Changes landed" value={String(d.requestToLanded.landed)} testId="landing-count" />
        <Figure label="Request → landed, p50" value={durationText(d.requestToLanded.p50Seconds)} testId="landing-p50" />
        <Figure label="Request → landed, p90" value={durationText(d.requestToLanded.p90Seconds)} testId="landing-p90" />
        <Figure
          label={`In the queue → landed, p50 (${d.queueToLanded.landed})`}
          value={durationText(d.queueToLanded.p50Seconds)}
          testId="queue-landing-p50"
        />
        <Figure
          label="In the queue → landed, p90"
          value={durationText(d.queueToLanded.p90Seconds)}
          testId="queue-landing-p90"
        />
      </div>
      {d.buckets.length === 0 ? (
        <Empty testId="landing-metrics">
          No Change landed in the last {d.range}. When a Candidate is promoted, the time from its Change's request to
          the new generation appears here, per {d.bucket}.
        </Empty>
      ) : (
        <div data-testid="landing-metrics" data-state="ready" data-buckets={d.buckets.length} className="h-64 w-full">
          <ResponsiveContainer width="100%" height="100%">
            <BarChart data={rows} margin={{ top: 8, right: 16, bottom: 8, left: 0 }}>
              <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
              <XAxis
                dataKey="t"
                tickFormatter={(t: number) => bucketLabel(t, d.bucket, d.range)}
                fontSize={11}
                minTickGap={24}
              />
              <YAxis fontSize={11} width={48} unit={` ${unit.label}`} />
              <Tooltip
                labelFormatter={(t) => `${bucketLabel(Number(t), d.bucket, d.range)} UTC`}
                formatter={(v, name) => [v === null ? "—" : `${v} ${unit.label}`, `request → landed, ${name}`]}
              />
              <Legend />
              {seriesElements(LANDING_SERIES)}
            </BarChart>
          </ResponsiveContainer>
        </div>
      )}
      <p className="mt-2 text-xs text-slate-500">
        Request → landed: from a Change's creation to the generation its Candidate was promoted as. In the queue →
        landed: from when "Land when ready" was last turned on to that generation, for the Changes that landed from the
        landing queue. p50 and p90 are nearest-rank percentiles of the Changes that landed in the window: p90 is the
        longest time of the fastest 90%. Per {d.bucket} by when they landed (UTC); a {d.bucket} without a bar had no
        landing.
      </p>
    </Panel>
  );
}

/** How many Changes waited in the landing queue, step by step over the window. */
function QueueDepthPanel({ d }: { d: Landing }) {
  const end = Math.min(d.to.getTime(), d.now.getTime());
  return (
    <Panel title={`Landing queue depth, last ${d.range}`} testId="queue-depth-panel">
      <div className="mb-3 grid grid-cols-2 gap-2 text-sm sm:grid-cols-4">
        <Figure label="Waiting now" value={String(d.depth.current)} testId="queue-depth-now" />
        <Figure label="Most at once" value={String(d.depth.peak)} testId="queue-depth-peak" />
      </div>
      {d.depth.peak === 0 ? (
        <Empty testId="queue-depth-chart">
          No Change waited in the landing queue in the last {d.range}. Turn on "Land when ready" on a Change and the
          queue's depth appears here, one step each time a Change joins or leaves.
        </Empty>
      ) : (
        <div
          data-testid="queue-depth-chart"
          data-state="ready"
          data-steps={d.depth.steps.length}
          className="h-56 w-full"
        >
          <ResponsiveContainer width="100%" height="100%">
            <LineChart data={d.depth.steps} margin={{ top: 8, right: 16, bottom: 8, left: 0 }}>
              <CartesianGrid strokeDasharray="3 3" stroke="#e2e8f0" />
              <XAxis
                dataKey="t"
                type="number"
                scale="time"
                domain={[d.from.getTime(), end]}
                tickFormatter={(t: number) => bucketLabel(t, d.bucket, d.range)}
                fontSize={11}
                minTickGap={24}
              />
              <YAxis allowDecimals={false} fontSize={11} width={40} />
              <Tooltip labelFormatter={(t) => `from ${timeLabel(Number(t))} UTC`} />
              {seriesElements(QUEUE_DEPTH_SERIES)}
            </LineChart>
          </ResponsiveContainer>
        </div>
      )}
      <p className="mt-2 text-xs text-slate-500">
        The Changes that land when ready and have not landed or been cancelled, at every moment a Change joined or left.
        The command queues keep no history (a message is deleted once handled); their depth now is on the Operations
        page.
      </p>
    </Panel>
  );
}
