// The settings every instance of a PostgreSQL deployment must agree on (the gateway secret, the
// admin token's hash), kept in the database they share: written once by the first instance that
// needs one, read by every other (decision 0020).
import type { PrismaClient } from './client.ts';

export class SharedSettings {
  constructor(private readonly prisma: PrismaClient) {}

  async get(name: string): Promise<string | null> {
    return (await this.prisma.gatewaySetting.findUnique({ where: { name } }))?.value ?? null;
  }

  /**
   * Stores `value` under `name` unless a value is there already, and returns the one stored.
   * Instances starting at once race here; exactly one wins (`created`), the others read its value.
   */
  async setOnce(name: string, value: string): Promise<{ value: string; created: boolean }> {
    const { count } = await this.prisma.gatewaySetting.createMany({ data: [{ name, value }], skipDuplicates: true });
    const stored = await this.prisma.gatewaySetting.findUniqueOrThrow({ where: { name } });
    return { value: stored.value, created: count === 1 };
  }
}
