export * from './factories.js';
export * from './infra.js';
export * from './private-postgres.js';
export * from './service-tier.js';
export * from './stand-ins.js';
export * from './template-database.js';
