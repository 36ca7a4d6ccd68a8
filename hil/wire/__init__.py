"""What crossed the wire: bounded captures, their summaries, counters on every hop and the loss ledger."""
