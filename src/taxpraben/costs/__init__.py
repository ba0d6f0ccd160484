"""What a run costs: token counts, prices, the spending budget and the ledger of answers."""
