/**
 * `@converge/nats`: Converge's backend over NATS JetStream KV.
 *
 * @module
 */
export {};
