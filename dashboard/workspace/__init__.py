"""The workspace: imported exports kept on disk as Parquet datasets partitioned by month, one folder per dataset.

``imports.import_to_workspace`` imports a file into a named dataset (streamed in bounded batches when it is
large), ``datasets`` names, lists, describes and opens them (an Ibis table through the backend's
``read_parquet``, or a pandas frame for a small one), ``writer`` writes the month partitions.
Everything here is pure: no Streamlit.
"""
