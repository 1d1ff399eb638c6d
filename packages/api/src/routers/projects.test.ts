import { checkPushToken, recordProjectProvisionFailed } from "@rhumbatron/db";
import { useTestDatabase } from "@rhumbatron/db/testing";
import { withTransaction } from "@rhumbatron/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ACME,
  callerAs,
  emailFor,
  LONER_EMAIL,
  OTHER,
  OUTSIDER_EMAIL,
  ROLES,
  recordingDb,
  rejection,
  seedTenants,
} from "../testing/fixtures.ts";
import { testServices } from "../testing/services.ts";
import { createContext } from "../trpc.ts";
import { createCaller } from "./_app.ts";

const t = useTestDatabase();
beforeAll(async () => seedTenants(t.db));

describe("projects.list", () => {
  it.each(ROLES)("lists the tenant's projects for a %s (viewer is the minimum)", async (role) => {
    const projects = await callerAs(t.db, emailFor(role)).projects.list({ tenantId: ACME.tenantId });
    expect(projects.map((p) => [p.name, p.status, p.canonicalGeneration]).sort()).toEqual([
      ["blog", "provisioning", 3],
      ["shop", "active", 0],
    ]);
    expect(projects.every((p) => p.id.startsWith("proj_"))).toBe(true);
  });

  it("refuses a member of another tenant with FORBIDDEN, before reading any project", async () => {
    const { db, touched } = recordingDb(t.db);
    const caller = createCaller(
      createContext({ db, headers: new Headers(), localUserEmail: OUTSIDER_EMAIL, services: testServices() }),
    );
    const err = await rejection(caller.projects.list({ tenantId: ACME.tenantId }));
    expect(err.code).toBe("FORBIDDEN");
    expect(err.message).not.toContain("shop");
    expect(touched).not.toContain("project");
    // Its own tenant still works, and shows only its own project.
    const own = await caller.projects.list({ tenantId: OTHER.tenantId });
    expect(own.map((p) => p.name)).toEqual(["secret"]);
    expect(touched).toContain("project"); // the recorder does see a read when one happens
  });

  it("answers an unknown tenant exactly like a tenant the caller is not in", async () => {
    const err = await rejection(callerAs(t.db, emailFor("admin")).projects.list({ tenantId: "ten_missing" }));
    expect(err.code).toBe("FORBIDDEN");
  });

  it("refuses a caller who belongs to no tenant", async () => {
    const err = await rejection(callerAs(t.db, LONER_EMAIL).projects.list({ tenantId: ACME.tenantId }));
    expect(err.code).toBe("FORBIDDEN");
  });

  it("returns UNAUTHORIZED when the local user does not exist", async () => {
    const err = await rejection(callerAs(t.db, "nobody@nowhere.test").projects.list({ tenantId: ACME.tenantId }));
    expect(err.code).toBe("UNAUTHORIZED");
  });

  it.each([
    ["a number", { tenantId: 123 }],
    ["missing", {}],
    ["empty", { tenantId: "" }],
    ["no input at all", undefined],
  ])(
    "rejects a tenantId that is %s with BAD_REQUEST and zod issues, without touching the database",
    async (_, input) => {
      const { db, touched } = recordingDb(t.db);
      const caller = createCaller(
        createContext({ db, headers: new Headers(), localUserEmail: emailFor("admin"), services: testServices() }),
      );
      // `as never` bypasses the input type on purpose: this is the input a broken client would send.
      const err = await rejection(caller.projects.list(input as never));
      expect(err.code).toBe("BAD_REQUEST");
      expect(err.cause).toBeInstanceOf(z.ZodError);
      expect((err.cause as z.ZodError).issues[0]?.path).toEqual(input === undefined ? [] : ["tenantId"]);
      expect(touched).toEqual([]);
    },
  );
});

describe("projects.create and cloneAccess", () => {
  it("lets an admin create a project that waits for provisioning, and refuses names twice", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    const { projectId } = await admin.projects.create({ tenantId: ACME.tenantId, name: "new-shop" });
    expect(await t.db.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
      status: "provisioning",
      canonicalGeneration: 0,
    });
    expect(await t.db.queueMessage.count({ where: { commandType: "project.provision", projectId } })).toBe(1);
    await expect(admin.projects.create({ tenantId: ACME.tenantId, name: "new-shop" })).rejects.toMatchObject({
      code: "CONFLICT",
    });
    await expect(admin.projects.create({ tenantId: ACME.tenantId, name: "Bad Name" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(
      callerAs(t.db, emailFor("operator")).projects.create({ tenantId: ACME.tenantId, name: "x" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
  });

  it("gives a viewer a clone URL with a read token for an active project of their tenant only", async () => {
    const viewer = callerAs(t.db, emailFor("viewer"));
    const shop = "proj_00000000-0000-4000-8000-00000000a001";
    const access = await viewer.projects.cloneAccess({ tenantId: ACME.tenantId, projectId: shop });
    expect(access.url).toMatch(new RegExp(`^http://x:rt_[A-Za-z0-9_-]+@localhost:3031/git/${shop}\\.git$`));
    expect(await t.db.repoToken.count({ where: { repo: shop, mode: "read" } })).toBe(1);
    await expect(
      viewer.projects.cloneAccess({ tenantId: ACME.tenantId, projectId: "proj_00000000-0000-4000-8000-00000000b001" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(
      viewer.projects.cloneAccess({ tenantId: ACME.tenantId, projectId: "proj_00000000-0000-4000-8000-00000000a002" }),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
  });
});

describe("projects.createForPush and pushAccess", () => {
  it("makes an empty project waiting for a push, and answers once the push URL, token and command", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    const access = await admin.projects.createForPush({ tenantId: ACME.tenantId, name: "pushed-shop" });
    const { projectId, token } = access;
    expect(await t.db.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
      status: "awaiting_push",
      sourceKind: "push",
    });
    // Nothing is provisioned before the push arrives.
    expect(await t.db.queueMessage.count({ where: { projectId } })).toBe(0);
    expect(access.url).toBe(`http://localhost:3031/git/push/${projectId}.git`);
    expect(token).toMatch(/^rpt_[A-Za-z0-9_-]{43}$/);
    expect(access.command).toBe(
      `git push http://x:${token}@localhost:3031/git/push/${projectId}.git HEAD:refs/heads/main`,
    );
    expect(access.expiresAt.getTime() - Date.now()).toBeGreaterThan(3500 * 1000);
    // Only the hash is kept: the token is in no row.
    const row = await t.db.pushToken.findUniqueOrThrow({ where: { projectId } });
    expect(JSON.stringify(row)).not.toContain(token);
    await checkPushToken(t.db, projectId, token, new Date());

    // A new token replaces the first, which stops working.
    const again = await admin.projects.pushAccess({ tenantId: ACME.tenantId, projectId });
    expect(again.token).not.toBe(token);
    await expect(checkPushToken(t.db, projectId, token, new Date())).rejects.toMatchObject({ code: "FORBIDDEN" });
    await checkPushToken(t.db, projectId, again.token, new Date());

    // Bad input is a typed 400; a project that does not wait takes no token; names stay unique.
    await expect(admin.projects.createForPush({ tenantId: ACME.tenantId, name: "Bad Name" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(
      admin.projects.createForPush({ tenantId: ACME.tenantId, name: "x".repeat(101) }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(admin.projects.createForPush({ tenantId: ACME.tenantId, name: "pushed-shop" })).rejects.toMatchObject({
      code: "CONFLICT",
    });
    const shop = "proj_00000000-0000-4000-8000-00000000a001";
    await expect(admin.projects.pushAccess({ tenantId: ACME.tenantId, projectId: shop })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    await expect(
      admin.projects.pushAccess({ tenantId: ACME.tenantId, projectId: "proj_00000000-0000-4000-8000-00000000b001" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("projects.import", () => {
  const rowCounts = async () => [await t.db.project.count(), await t.db.queueMessage.count()];

  it("lets an admin import a repository: the row keeps the source without credentials, and provisioning is queued", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    const { projectId } = await admin.projects.import({
      tenantId: ACME.tenantId,
      name: "imported-shop",
      from: "https://git.example.com/team/shop.git",
      branch: "release/2026",
    });
    expect(await t.db.project.findUniqueOrThrow({ where: { id: projectId } })).toMatchObject({
      status: "provisioning",
      sourceKind: "import",
      sourceUrl: "https://git.example.com/team/shop.git",
      sourceBranch: "release/2026",
      sourceSubmodules: false,
      failureReason: null,
    });
    expect(await t.db.queueMessage.count({ where: { commandType: "project.provision", projectId } })).toBe(1);
    const local = await admin.projects.import({
      tenantId: ACME.tenantId,
      name: "from-disk",
      from: "/srv/git/shop.git",
      submodules: true,
    });
    expect(await t.db.project.findUniqueOrThrow({ where: { id: local.projectId } })).toMatchObject({
      sourceUrl: "/srv/git/shop.git",
      sourceBranch: null,
      sourceSubmodules: true,
    });
  });

  it.each([
    ["an ssh URL", "ssh://git@example.com/team/shop.git", /ssh:\/\/ URLs are not accepted/],
    ["a git:// URL", "git://example.com/team/shop.git", /git:\/\/ URLs are not accepted/],
    ["an scp-like address", "git@example.com:team/shop.git", /not a URL nor an absolute path/],
    ["a relative path", "../shop", /not a URL nor an absolute path/],
    ["a bare name", "shop", /not a URL nor an absolute path/],
    ["a file:// URL of another host", "file://fileserver/srv/shop.git", /another host/],
    ["an ftp URL", "ftp://example.com/shop.git", /ftp:\/\/ URLs are not accepted/],
  ])("refuses %s with BAD_REQUEST naming what is accepted, and writes nothing", async (_, from, says) => {
    const before = await rowCounts();
    const err = await rejection(
      callerAs(t.db, emailFor("admin")).projects.import({ tenantId: ACME.tenantId, name: "refused", from }),
    );
    expect(err.code).toBe("BAD_REQUEST");
    const message = (err.cause as z.ZodError).issues.map((i) => i.message).join("; ");
    expect(message).toMatch(says);
    expect(message).toContain("an http:// or https:// URL, a file:// URL or an absolute path on the server");
    expect(await rowCounts()).toEqual(before);
  });

  it("refuses a URL carrying credentials, saying to give them separately, and writes nothing", async () => {
    for (const from of ["https://ada:s3cret@git.example.com/shop.git", "https://tok@git.example.com/shop.git"]) {
      const before = await rowCounts();
      const err = await rejection(
        callerAs(t.db, emailFor("admin")).projects.import({ tenantId: ACME.tenantId, name: "refused", from }),
      );
      expect(err.code).toBe("BAD_REQUEST");
      expect(err.message).toContain("the credentials field, or --username with --password-stdin");
      expect(err.message).not.toContain("s3cret");
      expect(await rowCounts()).toEqual(before);
    }
  });

  it("takes credentials for an https source: sealed in their own row, never in the project row or the answer", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    const secret = "tok-api-1a2b3c4d5e6f";
    const answer = await admin.projects.import({
      tenantId: ACME.tenantId,
      name: "private-shop",
      from: "https://git.example.com/team/private.git",
      credentials: { username: "ada", password: secret },
    });
    expect(JSON.stringify(answer)).not.toContain(secret);
    const project = await t.db.project.findUniqueOrThrow({ where: { id: answer.projectId } });
    expect(JSON.stringify(project)).not.toContain(secret);
    const row = await t.db.importCredential.findUniqueOrThrow({ where: { projectId: answer.projectId } });
    expect(row.sealed).not.toContain(secret);
    expect(row.sealed).not.toContain(Buffer.from(secret).toString("base64"));
    const queued = await t.db.queueMessage.findMany({ where: { projectId: answer.projectId } });
    expect(JSON.stringify(queued, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toContain(secret);
  });

  it.each([
    ["an absolute path", "/srv/git/shop.git"],
    ["a file:// URL", "file:///srv/git/shop.git"],
  ])("refuses credentials with %s (BAD_REQUEST), and writes nothing", async (_, from) => {
    const before = await rowCounts();
    const err = await rejection(
      callerAs(t.db, emailFor("admin")).projects.import({
        tenantId: ACME.tenantId,
        name: "refused",
        from,
        credentials: { username: "ada", password: "s3cret-path" },
      }),
    );
    expect(err.code).toBe("BAD_REQUEST");
    expect(err.message).toContain("credentials are only used for an http:// or https:// source");
    expect(err.message).not.toContain("s3cret-path");
    expect(await rowCounts()).toEqual(before);
  });

  it("refuses a user name with a colon (HTTP Basic cannot carry it), and writes nothing", async () => {
    const before = await rowCounts();
    const err = await rejection(
      callerAs(t.db, emailFor("admin")).projects.import({
        tenantId: ACME.tenantId,
        name: "refused",
        from: "https://git.example.com/shop.git",
        credentials: { username: "a:b", password: "x" },
      }),
    );
    expect(err.code).toBe("BAD_REQUEST");
    expect(await rowCounts()).toEqual(before);
  });

  it("refuses a branch name git would not accept, and writes nothing", async () => {
    const before = await rowCounts();
    const err = await rejection(
      callerAs(t.db, emailFor("admin")).projects.import({
        tenantId: ACME.tenantId,
        name: "refused",
        from: "https://git.example.com/shop.git",
        branch: "a..b",
      }),
    );
    expect(err.code).toBe("BAD_REQUEST");
    expect(await rowCounts()).toEqual(before);
  });

  it.each(ROLES.filter((r) => r !== "admin"))("refuses a %s with FORBIDDEN and writes nothing", async (role) => {
    const before = await rowCounts();
    const err = await rejection(
      callerAs(t.db, emailFor(role)).projects.import({
        tenantId: ACME.tenantId,
        name: "not-mine",
        from: "https://git.example.com/shop.git",
      }),
    );
    expect(err.code).toBe("FORBIDDEN");
    expect(await rowCounts()).toEqual(before);
  });

  it("shows a failed import's reason in the overview and the list", async () => {
    const admin = callerAs(t.db, emailFor("admin"));
    const { projectId } = await admin.projects.import({
      tenantId: ACME.tenantId,
      name: "will-fail",
      from: "/srv/git/nothing-here",
    });
    await withTransaction(t.db, (ctx) =>
      recordProjectProvisionFailed(ctx, {
        projectId,
        reason: "/srv/git/nothing-here does not exist on the worker's host",
      }),
    );
    const viewer = callerAs(t.db, emailFor("viewer"));
    const { project } = await viewer.projects.overview({ tenantId: ACME.tenantId, projectId });
    expect(project).toMatchObject({
      status: "failed",
      sourceKind: "import",
      sourceUrl: "/srv/git/nothing-here",
      failureReason: "/srv/git/nothing-here does not exist on the worker's host",
    });
    const listed = (await viewer.projects.list({ tenantId: ACME.tenantId })).find((p) => p.id === projectId);
    expect(listed).toMatchObject({ status: "failed", failureReason: expect.stringContaining("does not exist") });
  });
});

describe("projects.setAgent", () => {
  const shop = "proj_00000000-0000-4000-8000-00000000a001";
  const admin = () => callerAs(t.db, emailFor("admin"));
  const stored = async () => (await t.db.project.findUniqueOrThrow({ where: { id: shop } })).agent;

  it("sets the project's default Agent, shown by overview; the same again writes nothing; null goes back to the worker's default", async () => {
    const agent = {
      kind: "command" as const,
      argv: ["sh", "tools/agent.sh"] as [string, ...string[]],
      timeoutSeconds: 120,
    };
    const r = await admin().projects.setAgent({ tenantId: ACME.tenantId, projectId: shop, agent });
    expect(r).toEqual({
      projectId: shop,
      agent: { ...agent, allowOutsidePaths: false, secrets: [] },
      changed: true,
    });
    const overview = await admin().projects.overview({ tenantId: ACME.tenantId, projectId: shop });
    expect(overview.project.agent).toEqual({ ...agent, allowOutsidePaths: false, secrets: [] });
    const again = await admin().projects.setAgent({ tenantId: ACME.tenantId, projectId: shop, agent });
    expect(again.changed).toBe(false);
    const reset = await admin().projects.setAgent({ tenantId: ACME.tenantId, projectId: shop, agent: null });
    expect(reset).toMatchObject({ agent: null, changed: true });
    expect(await stored()).toBeNull();
  });

  it("refuses a program given as a path or a shell line, or a timeout out of bounds, with BAD_REQUEST, writing nothing", async () => {
    await admin().projects.setAgent({ tenantId: ACME.tenantId, projectId: shop, agent: { kind: "scripted" } });
    for (const agent of [
      { kind: "command", argv: ["/usr/bin/sh", "-c", "x"] },
      { kind: "command", argv: ["sh -c x"] },
      { kind: "command", argv: [] },
      { kind: "command", argv: ["sh"], timeoutSeconds: 0 },
      { kind: "command", argv: ["sh"], timeoutSeconds: 3601 },
      { kind: "command", argv: ["sh"], shell: true },
      { kind: "command", argv: ["sh"], secrets: ["lower_case"] },
      { kind: "command", argv: ["sh"], secrets: ["PATH"] },
      { kind: "robot" },
      ...[
        { program: "aider" },
        { endpoint: "ftp://models.example.com" },
        { endpoint: "https://user:pw@models.example.com" },
        { endpoint: "https://models.example.com/?key=x" },
        { keySecret: "not-a-name" },
        { maxTokens: 0 },
        { model: "" },
      ].map((bad) => ({
        kind: "program",
        program: "codex",
        model: "gpt-5.5",
        endpoint: "https://models.example.com",
        keySecret: "OPENAI_KEY",
        ...bad,
      })),
    ]) {
      const err = await rejection(
        admin().projects.setAgent({ tenantId: ACME.tenantId, projectId: shop, agent: agent as never }),
      );
      expect(err.code, JSON.stringify(agent)).toBe("BAD_REQUEST");
    }
    const err = await rejection(
      admin().projects.setAgent({
        tenantId: ACME.tenantId,
        projectId: shop,
        agent: { kind: "command", argv: ["/usr/bin/sh"] } as never,
      }),
    );
    expect(err.message).toContain("a bare program name on the Sandbox's PATH");
    expect(await stored()).toEqual({ kind: "scripted" });
  });
});
