"""The summarizers compaction uses: choice.py picks one from the settings, without any SDK."""
