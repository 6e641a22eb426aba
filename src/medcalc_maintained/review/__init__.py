"""Single-blind physician review packets: export to ``.xlsx`` and import into ledger records.

``packet``      the packet's layout and its export (note and question only, never a label, vote or score);
``reader``      reading a filled packet: every answered row, or every problem with its sheet and cell;
``adjudicate``  the ledger records of the answers (accepted or deferred for a second reviewer), written
                with the one safe ledger write;
``workflow``    the ``review export`` / ``review import`` commands' work, paths from the project.
"""
