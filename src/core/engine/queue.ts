/** A FIFO queue with O(1) push and shift (an array with a moving head, compacted now and then). */
export class Queue<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  get first(): T | undefined {
    return this.items[this.head];
  }

  push(item: T): void {
    this.items.push(item);
  }

  /**
   * Adds an item behind every item whose `key` is no larger: FIFO among equal keys. O(1) when
   * keys come in order, as they nearly do (a decode instance's KV landing times).
   */
  pushOrdered(item: T, key: (t: T) => number): void {
    const k = key(item);
    let i = this.items.length;
    while (i > this.head && key(this.items[i - 1]!) > k) i--;
    this.items.splice(i, 0, item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head++];
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
