"""voice"""
