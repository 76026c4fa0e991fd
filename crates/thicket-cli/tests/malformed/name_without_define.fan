<start> "x" | "y"
