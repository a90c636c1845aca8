export * from './infra.js';
