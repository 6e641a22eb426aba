"""Every Eval Ever (EEE): its instance-level results read by ``regrade`` (``reader.py``)."""
