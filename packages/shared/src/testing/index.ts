export * from './infra.js';
export * from './private-postgres.js';
