export * from './pool.js';
export * from './migrate.js';
export * from './applied-content-version.js';
