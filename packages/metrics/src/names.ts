/**
 * Metric names, help texts and buckets. The `controller_runtime_*`, `workqueue_*` and
 * `leader_election_*` ones are controller-runtime's (same names, labels, meaning and buckets), so
 * its dashboards and alerts work unchanged; the `converge_*` ones are Converge's own.
 */

/** controller-runtime's reconcile_time_seconds buckets. */
export const RECONCILE_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** controller-runtime's workqueue buckets: 10 ns × 10^i for i in 0..11 (10 ns to 1000 s). */
export const WORKQUEUE_BUCKETS: readonly number[] = Array.from({ length: 12 }, (_, i) =>
  Number((1e-8 * 10 ** i).toPrecision(1)),
);

/** Event-to-reconcile latency: 100 µs to 5 min. */
export const EVENT_LATENCY_BUCKETS: readonly number[] = [
  0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
];

/** Informer list and kind sync durations: 10 ms to 5 min. */
export const LIST_BUCKETS: readonly number[] = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export const Names = {
  reconcileTotal: 'controller_runtime_reconcile_total',
  reconcileErrors: 'controller_runtime_reconcile_errors_total',
  terminalErrors: 'controller_runtime_terminal_reconcile_errors_total',
  panics: 'controller_runtime_reconcile_panics_total',
  reconcileTime: 'controller_runtime_reconcile_time_seconds',
  timeouts: 'controller_runtime_reconcile_timeouts_total',
  maxConcurrent: 'controller_runtime_max_concurrent_reconciles',
  activeWorkers: 'controller_runtime_active_workers',
  depth: 'workqueue_depth',
  adds: 'workqueue_adds_total',
  queueDuration: 'workqueue_queue_duration_seconds',
  workDuration: 'workqueue_work_duration_seconds',
  unfinished: 'workqueue_unfinished_work_seconds',
  longestRunning: 'workqueue_longest_running_processor_seconds',
  retries: 'workqueue_retries_total',
  leaderStatus: 'leader_election_master_status',
  leaderTransitions: 'converge_leader_election_transitions',
  dropped: 'converge_reconcile_dropped_total',
  causes: 'converge_reconcile_causes_total',
  hotLoopKeys: 'converge_hot_loop_keys',
  selfCaused: 'converge_self_caused_reconciles_total',
  eventLatency: 'converge_event_to_reconcile_seconds',
  kindReconcileTotal: 'converge_kind_reconcile_total',
  kindReconcileTime: 'converge_kind_reconcile_time_seconds',
  kinds: 'converge_dynamic_kinds',
  kindSync: 'converge_dynamic_kind_sync_seconds',
  kindEvents: 'converge_dynamic_events_total',
  listDuration: 'converge_informer_list_duration_seconds',
  relists: 'converge_informer_relists_total',
  watchRestarts: 'converge_informer_watch_restarts_total',
  resourceVersionAge: 'converge_informer_resource_version_age_seconds',
  informerSynced: 'converge_informer_synced',
  loopStall: 'converge_event_loop_stall_seconds',
  shardMembers: 'converge_shard_members',
  shardEpoch: 'converge_shard_epoch',
  shardPhase: 'converge_shard_phase',
  shardChanges: 'converge_shard_ownership_changes_total',
  shardKeySpaceShare: 'converge_shard_key_space_share',
  shardQueueKeys: 'converge_shard_queue_keys',
  fencedWrites: 'converge_fenced_writes_total',
} as const;
