# Placeholder.
