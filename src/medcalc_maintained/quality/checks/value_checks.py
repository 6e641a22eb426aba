"""Checks of the extracted values and the label against numbers the note prints."""
