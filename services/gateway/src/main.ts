import { loadConfig } from '@ccs/shared';
import { GatewayConfigSchema } from './config.js';
import { startGateway } from './server.js';

try {
  const gateway = await startGateway(loadConfig(GatewayConfigSchema));
  const shutdown = () => {
    const force = setTimeout(() => process.exit(1), 25_000);
    force.unref();
    void gateway.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
} catch (err) {
  const e = err as Error;
  console.error(e.name === 'InfraError' || e.name === 'ConfigError' ? `[gateway] ${e.message}` : err);
  process.exit(1);
}
