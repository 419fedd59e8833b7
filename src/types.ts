// Shared value types used across the core. Kept tiny on purpose.
export type Vars = Record<string, unknown>;
