/** The Event printer, for core/v1 and events.k8s.io/v1 (both print as the internal Event). */
import * as doc from '../descriptions.ts';
import { at, int, type Json, obj, str } from '../fields.ts';
import { column, type Printer, wide } from '../printer.ts';
import { ageSince, instant } from '../time.ts';

/** The fields the printer reads, named as in core/v1. */
interface EventView {
  readonly firstTimestamp: unknown;
  readonly lastTimestamp: unknown;
  readonly eventTime: unknown;
  readonly series: unknown;
  readonly count: unknown;
  readonly involvedObject: unknown;
  readonly source: unknown;
  readonly reportingController: unknown;
  readonly reportingInstance: unknown;
  readonly message: unknown;
}

const coreView = (e: Json): EventView => ({
  firstTimestamp: e.firstTimestamp,
  lastTimestamp: e.lastTimestamp,
  eventTime: e.eventTime,
  series: e.series,
  count: e.count,
  involvedObject: e.involvedObject,
  source: e.source,
  reportingController: e.reportingComponent,
  reportingInstance: e.reportingInstance,
  message: e.message,
});

/** events.k8s.io/v1 field names, as its conversion to the internal Event maps them. */
const eventsView = (e: Json): EventView => ({
  firstTimestamp: e.deprecatedFirstTimestamp,
  lastTimestamp: e.deprecatedLastTimestamp,
  eventTime: e.eventTime,
  series: e.series,
  count: e.deprecatedCount,
  involvedObject: e.regarding,
  source: e.deprecatedSource,
  reportingController: e.reportingController,
  reportingInstance: e.reportingInstance,
  message: e.note,
});

function eventPrinter(view: (event: Json) => EventView): Printer {
  return {
    columns: [
      column('Last Seen', 'string', doc.EVENT_LAST_TIMESTAMP),
      column('Type', 'string', doc.EVENT_TYPE),
      column('Reason', 'string', doc.EVENT_REASON),
      column('Object', 'string', doc.EVENT_INVOLVED_OBJECT),
      wide('Subobject', doc.EVENT_FIELD_PATH),
      wide('Source', doc.EVENT_SOURCE),
      column('Message', 'string', doc.EVENT_MESSAGE),
      wide('First Seen', doc.EVENT_FIRST_TIMESTAMP),
      wide('Count', doc.EVENT_COUNT),
      column('Name', 'string', doc.NAME, { format: 'name', priority: 1 }),
    ],
    row(event, nowMs) {
      const e = view(event);
      // A zero (absent) firstTimestamp falls back to eventTime, a zero lastTimestamp to firstSeen.
      const firstSeen = ageSince(
        instant(e.firstTimestamp) === undefined ? e.eventTime : e.firstTimestamp,
        nowMs,
      );
      let lastSeen = instant(e.lastTimestamp) === undefined ? firstSeen : ageSince(e.lastTimestamp, nowMs);
      let count = int(e.count);
      if (typeof e.series === 'object' && e.series !== null) {
        lastSeen = ageSince(at(e.series, 'lastObservedTime'), nowMs);
        count = int(at(e.series, 'count'));
      } else if (count === 0) {
        count = 1;
      }
      const kind = str(at(e.involvedObject, 'kind')).toLowerCase();
      const target = str(at(e.involvedObject, 'name'));
      const component = str(at(e.source, 'component')) || str(e.reportingController);
      const host = str(at(e.source, 'host')) || str(e.reportingInstance);
      return {
        cells: [
          lastSeen,
          str(event.type),
          str(event.reason),
          target === '' ? kind : `${kind}/${target}`,
          str(at(e.involvedObject, 'fieldPath')),
          host === '' ? component : `${component}, ${host}`,
          str(e.message).trim(),
          firstSeen,
          count,
          str(at(obj(event.metadata), 'name')),
        ],
      };
    },
  };
}

/**
 * LAST SEEN TYPE REASON OBJECT MESSAGE, + SUBOBJECT SOURCE FIRST-SEEN COUNT NAME with `-o wide`,
 * for core/v1 Events. A series sets LAST SEEN and COUNT; a singleton without count counts 1.
 */
export const coreEventPrinter: Printer = eventPrinter(coreView);

/** The same columns for events.k8s.io/v1 Events (`regarding`, `note`, `deprecated*` fields). */
export const eventsEventPrinter: Printer = eventPrinter(eventsView);
