export * from './app-error.js';
export * from './database.js';
export * from './kinds.js';
