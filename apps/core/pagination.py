"""Cursor pagination: stable under inserts and O(1) per page at any depth."""

from rest_framework.pagination import CursorPagination


class IdCursorPagination(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
