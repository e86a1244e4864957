import { z } from "zod";
import { readCsv } from "./csv.ts";
import { DataError } from "./data-error.ts";
import { nonNegativeNumberCell, numberCell } from "./fields.ts";
import { parseCsvRows } from "./parse-rows.ts";

/** FREESH's day: 288 slots of 5 minutes. */
export const FREESH_SLOTS = 288;
export const FREESH_SLOT_MINUTES = 5;

/** The three data centers of e_instance.csv, by their column names (whitespace trimmed). */
export const FREESH_SITES = ["Data center A", "Data center B", "location 3"] as const;

/**
 * Marginal emission rates per site over one day (PJM five-minute locational marginal emissions,
 * which PJM publishes in lb/MWh; the file carries no unit). Values can be negative.
 */
export interface FreeshEmissions {
  source: string;
  slotMinutes: number;
  siteNames: string[];
  /** `bySite[site][slot]` */
  bySite: number[][];
}

/** FREESH request types: input short/long x output short/long. */
export const FREESH_TYPES = ["ss", "sl", "ls", "ll"] as const;
export type FreeshType = (typeof FREESH_TYPES)[number];

/** Predicted queries per second per request type, one row per 5-minute slot. */
export interface FreeshDemand {
  source: string;
  slotMinutes: number;
  rows: Record<FreeshType, number>[];
}

const EmissionRow = z.object({ "Data center A": numberCell, "Data center B": numberCell, "location 3": numberCell });
const DemandRow = z.object({ ss: nonNegativeNumberCell, sl: nonNegativeNumberCell, ls: nonNegativeNumberCell, ll: nonNegativeNumberCell });

/**
 * Parses FREESH's e_instance.csv (288 rows x 3 sites).
 *
 * @example
 * parseFreeshEmissions(text, "e_instance.csv").bySite[1]![0]; // site B, first 5 minutes
 */
export function parseFreeshEmissions(text: string, source: string): FreeshEmissions {
  const rows = parseCsvRows(readCsv(text, source), FREESH_SITES, EmissionRow);
  requireDay(rows.length, source);
  return { source, slotMinutes: FREESH_SLOT_MINUTES, siteNames: [...FREESH_SITES], bySite: FREESH_SITES.map((site) => rows.map((r) => r[site])) };
}

/** Parses FREESH's base_throughput_{a,b}.csv (288 rows, QPS per type). */
export function parseFreeshDemand(text: string, source: string): FreeshDemand {
  const rows = parseCsvRows(readCsv(text, source), FREESH_TYPES, DemandRow);
  requireDay(rows.length, source);
  return { source, slotMinutes: FREESH_SLOT_MINUTES, rows };
}

function requireDay(count: number, source: string): void {
  if (count !== FREESH_SLOTS) throw new DataError(`${source}: expected ${FREESH_SLOTS} rows (one day of 5-minute slots), got ${count}`);
}
