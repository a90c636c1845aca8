import { loadConfig } from '@ccs/shared';
import { GatewayConfigSchema } from './config.js';
import { startGateway } from './server.js';

try {
  const gateway = await startGateway(loadConfig(GatewayConfigSchema));
  let closing: Promise<void> | undefined;
  // Ctrl-C under `npm start` reaches the gateway twice (from the terminal and from the launcher).
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) return;
    gateway.app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 25_000);
    force.unref();
    closing = gateway.close().then(() => {
      gateway.app.log.info('gateway stopped');
      process.exit(0);
    });
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
} catch (err) {
  const e = err as Error;
  console.error(e.name === 'InfraError' || e.name === 'ConfigError' ? `[gateway] ${e.message}` : err);
  process.exit(1);
}
