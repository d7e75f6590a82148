"""Test helpers shipped with catalog: a loopback HTTP server with scripted faults."""
