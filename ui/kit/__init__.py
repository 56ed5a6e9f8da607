"""What every page shares: state and links, errors, charts and their style, downloads, tables, cached engine calls,
and the live-run loop."""
