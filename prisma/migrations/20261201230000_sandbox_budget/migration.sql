-- CreateTable
CREATE TABLE "tenant_sandbox_budgets" (
    "tenant_id" TEXT NOT NULL,
    "monthly_seconds" INTEGER NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,
    "updated_by" TEXT NOT NULL,

    CONSTRAINT "tenant_sandbox_budgets_pkey" PRIMARY KEY ("tenant_id")
);

-- CreateTable
CREATE TABLE "sandbox_charges" (
    "reservation_id" TEXT NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "env" TEXT NOT NULL,
    "window" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "project_id" TEXT,
    "change_id" TEXT,
    "reserved_seconds" INTEGER NOT NULL,
    "billing" TEXT,
    "wall_seconds" INTEGER,
    "charged_seconds" INTEGER,
    "reserved_at" TIMESTAMP(3) NOT NULL,
    "settled_at" TIMESTAMP(3),

    CONSTRAINT "sandbox_charges_pkey" PRIMARY KEY ("reservation_id")
);

-- CreateIndex
CREATE INDEX "sandbox_charges_tenant_id_window_idx" ON "sandbox_charges"("tenant_id", "window");

-- AddForeignKey
ALTER TABLE "tenant_sandbox_budgets" ADD CONSTRAINT "tenant_sandbox_budgets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "sandbox_charges" ADD CONSTRAINT "sandbox_charges_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
