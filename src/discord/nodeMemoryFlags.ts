/**
 * The V8 flags a bot process runs with: `npm start`, every shard process of
 * `npm run start:sharded`, and the Docker image (package.json and the Dockerfile repeat them;
 * a test keeps them equal). A busy shard allocates fast, and V8's defaults keep much of that as
 * resident garbage: the young generation grows to 64 MiB per semi-space under a burst and stays
 * committed, and the old generation may grow to several times its live size before a full
 * collection. Semi-spaces of at most 8 MiB (shorter scavenges too) and an old generation
 * collected at 1.6 times its live size keep 300 replies streaming at once within 400 MiB
 * (test/bench/scale.bench.ts), for some more CPU per turn (docs/architecture.md, Memory of a
 * busy shard).
 */
export const NODE_MEMORY_FLAGS: ReadonlyArray<string> = ["--max-semi-space-size=8", "--heap-growing-percent=60"]
