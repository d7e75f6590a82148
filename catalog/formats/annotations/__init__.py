"""Images with annotations: a list file of image paths and fields, boxes from VOC XML files
(`image_list`); COCO (`coco_json`), PASCAL VOC (`voc_xml`), KITTI (`kitti`), CUB (`cub`), CLEVR
(`clevr`), CelebA's attribute tables (`image_tables`), Stanford Cars' .mat struct
(`mat_records`).
"""
