"""Attacks on what is published, and the risk models an attacker's success is measured by:
population risk and uniqueness (`anonsql risk`), the linkage attack (`anonsql attack linkage`).

Rooms: uniqueness.py and linkage.py (pure), stats.py (SQL → small results), verify.py (the gates),
job.py (the reports), entry.py (arguments checked on an open engine)."""
