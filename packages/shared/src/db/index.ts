export * from './pool.js';
export * from './migrate.js';
export * from './applied-content-version.js';
export * from './prepared.js';
