/** The longest delay a Node timer takes (about 24.8 days): a longer one fires at once, in a loop where it repeats. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
