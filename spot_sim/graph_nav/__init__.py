"""The simulator's GraphNav: map and routes, localization and navigation, recording, and
Autowalk compilation."""
