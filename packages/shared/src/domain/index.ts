export * from './drop-table.js';
export * from './random.js';
export * from './roll.js';
export * from './odds.js';
