"""Secret scrubbing: the scrubber, its rule table and the allow-list."""
